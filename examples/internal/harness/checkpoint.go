package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/enforce-nn/enforce/train"
)

// RunDir returns the checkpoint folder of one model under root: root
// joined with the parts (mode, seed, and whatever else tells the program's
// models apart), formatted with %v and joined by "-", with path
// separators and spaces replaced. It returns "" when root is "".
func RunDir(root string, parts ...any) string {
	if root == "" {
		return ""
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == ' ' || r == filepath.Separator {
				return '_'
			}
			return r
		}, fmt.Sprint(p))
	}
	return filepath.Join(root, strings.Join(names, "-"))
}

// Checkpoint makes the model cfg describes checkpoint into its folder
// under c.Resume (RunDir(c.Resume, parts...)); it does nothing when
// -resume is not given.
func (c Common) Checkpoint(cfg *train.Config, parts ...any) {
	if dir := RunDir(c.Resume, parts...); dir != "" {
		cfg.Checkpoint = train.Checkpoint{Dir: dir}
	}
}

// NewModel returns the model cfg describes. When cfg.Checkpoint.Dir is
// set and holds a checkpoint, the model is resumed from it (train.Resume),
// so that its next Fit finishes the interrupted run bit for bit; a
// checkpoint of another configuration is an error. Otherwise the model is
// new.
func NewModel(cfg train.Config) (*train.Model, error) {
	if cfg.Checkpoint.Dir == "" {
		return train.New(cfg)
	}
	m, err := train.Resume(cfg.Checkpoint.Dir, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return train.New(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("resuming from %s: %w", cfg.Checkpoint.Dir, err)
	}
	return m, nil
}

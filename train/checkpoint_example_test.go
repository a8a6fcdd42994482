package train_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"slices"
	"time"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// ExampleResume shows how a program wires checkpoints and a -resume flag.
// The first run starts afresh, as no checkpoint exists yet, and writes
// one at the end of training; the second finds it, and its Fit returns
// the finished run's History without training again. A run interrupted
// part of the way would continue from its last checkpoint instead, to the
// same weights and History as an uninterrupted one.
func ExampleResume() {
	dir, err := os.MkdirTemp("", "checkpoints")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	p := problems.FittingEquality{}
	d := p.Sample(100, 1)
	cfg := train.Config{
		Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
		LearnRate: 1e-2, BatchSize: 32, Epochs: 20, Seed: 1, Quiet: true,
		Checkpoint: train.Checkpoint{Dir: dir, Every: time.Minute},
	}
	run := func() (train.History, error) {
		model, err := train.Resume(dir, cfg)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Println("no checkpoint: starting afresh")
			model, err = train.New(cfg)
		}
		if err != nil {
			return nil, err
		}
		return model.Fit(d.X, d.Y)
	}
	first, err := run()
	if err != nil {
		log.Fatal(err)
	}
	again, err := run()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("epochs:", len(again), "same History:", slices.Equal(first, again))
	// Output:
	// no checkpoint: starting afresh
	// epochs: 20 same History: true
}

package dataset

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// where is the place of one sample's line: file, offset, length.
type where struct {
	file int
	off  int64
	n    int
}

// Merge verifies the shard files at paths and writes the data set they
// make to out: the header with shard 0/1 and every sample's line in index
// order, byte for byte the file a single process writes as Shard{0, 1}
// (with a deterministic Solver). It refuses, naming the file and line,
// and writes nothing, when a file's header or a line is malformed or a
// checksum wrong, when two files' Specs differ (naming the key), when
// the shards are not exactly K = 0, …, OF−1 of one OF, when a shard's
// file ends in an incomplete line, or when an index is missing (an
// unfinished shard) or appears twice. out is written to a temporary file
// in its folder, synced and renamed, so it is whole or absent. It returns
// the data set's Spec.
func Merge(out string, paths []string) (Spec, error) {
	if len(paths) == 0 {
		return Spec{}, fmt.Errorf("dataset: Merge: no shard files")
	}
	var spec Spec
	var of int
	shardFile := map[int]string{}
	at := map[int]where{}
	for fi, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return spec, fmt.Errorf("dataset: Merge: %w", err)
		}
		sc, err := scan(f, func(s *Sample, off int64, n int) error {
			if w, ok := at[s.Index]; ok {
				return fmt.Errorf("index %d appears twice (also in %s)", s.Index, paths[w.file])
			}
			at[s.Index] = where{fi, off, n}
			return nil
		}, func(sc scanned) error {
			if fi == 0 {
				spec, of = sc.spec, sc.shard.Of
			}
			if d := diff(sc.spec, spec); d != "" {
				return fmt.Errorf("its header differs from %s's: %s", paths[0], d)
			}
			if sc.shard.Of != of {
				return fmt.Errorf("shard %s is not one of %d shards, as %s's", sc.shard, of, paths[0])
			}
			if q, ok := shardFile[sc.shard.K]; ok {
				return fmt.Errorf("shard %s is also %s", sc.shard, q)
			}
			shardFile[sc.shard.K] = p
			return nil
		})
		f.Close()
		if err != nil {
			return spec, fmt.Errorf("dataset: Merge: %s: %w", p, err)
		}
		if sc.partial {
			return spec, fmt.Errorf("dataset: Merge: %s ends in an incomplete line: its shard was interrupted; run it again to finish it", p)
		}
	}
	for k := range of {
		if _, ok := shardFile[k]; !ok {
			return spec, fmt.Errorf("dataset: Merge: shard %d/%d is missing (%d files given)", k, of, len(paths))
		}
	}
	if len(at) < spec.Count {
		var missing []string
		for i := 0; i < spec.Count && len(missing) <= 10; i++ {
			if _, ok := at[i]; !ok {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		if len(missing) > 10 {
			missing = append(missing[:10], "…")
		}
		return spec, fmt.Errorf("dataset: Merge: %d of %d samples are missing (indices %s): their shards are unfinished; run them again",
			spec.Count-len(at), spec.Count, strings.Join(missing, ", "))
	}
	return spec, write(out, spec, paths, at)
}

// write writes the data set of spec to out from the lines at.
func write(out string, spec Spec, paths []string, at map[int]where) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp*")
	if err != nil {
		return fmt.Errorf("dataset: Merge: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	files := make([]*os.File, len(paths))
	for i, p := range paths {
		if files[i], err = os.Open(p); err != nil {
			return fmt.Errorf("dataset: Merge: %w", err)
		}
		defer files[i].Close()
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	bw.Write(spec.header(Shard{0, 1}))
	var buf []byte
	for i := range spec.Count {
		w := at[i]
		buf = append(buf[:0], make([]byte, w.n)...)
		if _, err := files[w.file].ReadAt(buf, w.off); err != nil {
			return fmt.Errorf("dataset: Merge: %s: %w", paths[w.file], err)
		}
		// The files were checked above; check the line again in case
		// one changed since.
		if s, err := parseLine(strings.TrimSuffix(string(buf), "\n"), spec); err != nil || s.Index != i {
			return fmt.Errorf("dataset: Merge: %s changed while merging (sample %d)", paths[w.file], i)
		}
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: Merge: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("dataset: Merge: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("dataset: Merge: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("dataset: Merge: %w", err)
	}
	return nil
}

// Dataset is a whole data set in memory.
type Dataset struct {
	Spec Spec
	// Samples holds every sample, Samples[i].Index = i.
	Samples []Sample
}

// Read reads a data set (as Merge writes it, or a complete Shard{0, 1}
// file) from r and verifies it: the header, every line's checksum and
// fields, every index 0, …, Count−1 exactly once and in order, no
// incomplete last line.
func Read(r io.Reader) (*Dataset, error) {
	d := &Dataset{}
	sc, err := scan(r, func(s *Sample, _ int64, _ int) error {
		if s.Index != len(d.Samples) {
			return fmt.Errorf("index %d where %d is due", s.Index, len(d.Samples))
		}
		d.Samples = append(d.Samples, *s)
		return nil
	}, func(sc scanned) error {
		if sc.shard != (Shard{0, 1}) {
			return fmt.Errorf("shard %s: a shard's file, not a data set (merge the shards first)", sc.shard)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dataset: Read: %w", err)
	}
	d.Spec = sc.spec
	if sc.partial || len(d.Samples) != d.Spec.Count {
		return nil, fmt.Errorf("dataset: Read: %d complete samples, the header says %d", len(d.Samples), d.Spec.Count)
	}
	return d, nil
}

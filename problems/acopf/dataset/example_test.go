package dataset_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

// Example writes a data set of 10 samples of case57 in 3 shards, merges
// them, and reads the data set back. The solver here is a stand-in that
// returns the flat start; real runs use dataset.Reference (or
// dataset.NewReference, which fills in the Spec too).
func Example() {
	c, err := acopf.Load("case57_ieee")
	if err != nil {
		log.Fatal(err)
	}
	m, err := acopf.NewModel(c)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := dataset.CaseSHA256(c.Name)
	if err != nil {
		log.Fatal(err)
	}
	nx, ny := m.Dims()
	g := &dataset.Generator{
		Spec: dataset.Spec{Case: c.Name, CaseSHA256: sum, Formulation: "pglib", Seed: 1, Count: 10,
			Load: dataset.DefaultLoadModel, Solver: "flat start (a stand-in)", Tol: 1e-8, NX: nx, NY: ny},
		Base: m.Loads(),
		Solve: func(x []float64) ([]float64, float64, error) {
			y := m.FlatStart()
			return y, m.Objective(y), nil
		},
	}
	dir, err := os.MkdirTemp("", "dataset-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var shards []string
	for k := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d-of-3.tsv", k))
		if _, err := g.Run(context.Background(), path, dataset.Shard{K: k, Of: 3}); err != nil {
			log.Fatal(err)
		}
		shards = append(shards, path)
	}
	out := filepath.Join(dir, "case57.tsv")
	if _, err := dataset.Merge(out, shards); err != nil {
		log.Fatal(err)
	}
	// One process writes the same bytes.
	single := filepath.Join(dir, "single.tsv")
	if _, err := g.Run(context.Background(), single, dataset.Shard{K: 0, Of: 1}); err != nil {
		log.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(single)
	fmt.Println("merged = single process:", bytes.Equal(a, b))

	f, err := os.Open(out)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	d, err := dataset.Read(f)
	if err != nil {
		log.Fatal(err)
	}
	s := d.Samples[7]
	fmt.Printf("%s: %d samples, loads %s\n", d.Spec.Case, len(d.Samples), d.Spec.Load)
	fmt.Printf("sample %d: %d loads, %d outputs, first load %.4f p.u. (case: %.4f)\n", s.Index, len(s.X), len(s.Y), s.X[0], g.Base[0])
	// Output:
	// merged = single process: true
	// pglib_opf_case57_ieee: 10 samples, loads glocal-uniform alpha=U[0.9,1.1] eta=U[1-0.1,1+0.1]
	// sample 7: 84 loads, 128 outputs, first load 0.4800 p.u. (case: 0.5500)
}

package harness

import (
	"io"

	"github.com/enforce-nn/enforce"
)

// Common are the settings every paper experiment has: the training budget
// and learning rate, the backbone's width, the displacement weight, the
// seeds, the progress lines and the output folder.
type Common struct {
	Epochs, Width, Seeds, LogLines int
	// Layers is the number of hidden layers of width Width (-layers);
	// 0 means 1.
	Layers      int
	LR, LambdaD float64
	// Seed is the first model seed (and, where the program draws its
	// data, the data's seed); model seeds are Seed, Seed+1, ….
	Seed uint64
	Out  string
	// Resume is the folder of the models' checkpoints (-resume): each
	// model checkpoints into its own subfolder (Checkpoint) every few
	// minutes, and a run that finds a checkpoint there continues it.
	Resume string
	// Precision is the backbone's arithmetic (-precision float64|float32,
	// train.Config.Precision); the zero value means float64.
	Precision enforce.Precision
	// Quick reports a smoke run: -quick was given (Flags.QuickVar).
	Quick bool
}

// Register registers -epochs, -width, -lr, -lambdaD, -seed, -seeds, -log,
// -out, -resume and -precision on f, with c's values as defaults; seedHelp says what -seed
// seeds.
func (c *Common) Register(f *Flags, seedHelp string) {
	f.IntVar(&c.Epochs, "epochs", c.Epochs, "epochs per model")
	f.IntVar(&c.Width, "width", c.Width, "width of the backbone's hidden layers")
	f.IntVar(&c.Layers, "layers", max(c.Layers, 1), "number of hidden layers of the backbone (the reference's code builds 2 for every fitting problem: see docs/setup.md)")
	f.Float64Var(&c.LR, "lr", c.LR, "Adam learning rate")
	f.Float64Var(&c.LambdaD, "lambdaD", c.LambdaD, "λ_D, the weight of ENFORCE's displacement term")
	f.Uint64Var(&c.Seed, "seed", c.Seed, seedHelp)
	f.IntVar(&c.Seeds, "seeds", c.Seeds, "number of model seeds; tables give mean ± std over them")
	f.IntVar(&c.LogLines, "log", c.LogLines, "progress lines per model on stderr (0: none)")
	f.Out(&c.Out)
	f.StringVar(&c.Resume, "resume", c.Resume, ResumeUsage)
	PrecisionVar(f, &c.Precision)
	f.QuickVar(&c.Quick)
}

// Ours returns the suffix of our rows' names in a table beside the
// paper's: " (ours)", or " (smoke)" in a smoke run (-quick), whose numbers
// are not comparable with the paper's.
func (c Common) Ours() string {
	if c.Quick {
		return " (smoke)"
	}
	return " (ours)"
}

// ResumeUsage is the help of every program's -resume flag.
const ResumeUsage = "checkpoint every model into a subfolder of this folder every 5 minutes and at its end, and continue any model whose checkpoint is already there (run the same command again after an interruption; finished models are not trained again)"

// PrecisionName returns "float64" or "float32", the backbone's
// precision as the programs' tables name it.
func (c Common) PrecisionName() string {
	return precisionValue{&c.Precision}.String()
}

// Sizes returns the backbone's layer sizes: nx inputs, Layers hidden
// layers of Width, ny outputs.
func (c Common) Sizes(nx, ny int) []int {
	sizes := []int{nx}
	for range max(c.Layers, 1) {
		sizes = append(sizes, c.Width)
	}
	return append(sizes, ny)
}

// Prefixed returns a writer that writes prefix before every write to w
// (one progress line each, as train's Progress writes them).
func Prefixed(w io.Writer, prefix string) io.Writer { return prefixed{w, prefix} }

// prefixed is Prefixed's writer.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

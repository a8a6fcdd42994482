package report_test

import (
	"fmt"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/examples/internal/report"
)

// A table with the paper's numbers beside ours, mean ± std over seeds.
func Example() {
	truth := mat.NewDense(3, 1, []float64{1, 2, 3})
	var r2 []float64
	for _, pred := range [][]float64{{1.1, 2, 3}, {1, 2, 2.9}} {
		r2 = append(r2, report.R2(mat.NewDense(3, 1, pred), truth))
	}
	tab := report.NewTable("Fitting", "method", "R²")
	tab.AddRow("ENFORCE (paper)", "0.999 ± 0.000")
	tab.AddRow("ENFORCE (ours)", report.Summarize(r2).Format("%.3f"))
	if err := tab.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Fitting
	// method           R²
	// ENFORCE (paper)  0.999 ± 0.000
	// ENFORCE (ours)   0.995 ± 0.000
}

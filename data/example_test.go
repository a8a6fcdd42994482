package data_test

import (
	"fmt"

	"github.com/enforce-nn/enforce/data"
)

// ExampleLoadCSV reads your own data: input and label columns by name.
func ExampleLoadCSV() {
	// ../testdata/xy.csv:
	//	id,x1,x2,note,y1
	//	1,0.5,-1,first,2.5e-1
	//	2,1.5,2,"second, quoted",-3
	//	3,-0.25,1E2,,0
	d, err := data.LoadCSV("../testdata/xy.csv", []string{"x1", "x2"}, []string{"y1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Len(), "samples")
	fmt.Println(d.X.RawRowView(2), d.Y.RawRowView(2))

	_, err = data.LoadCSV("../testdata/xy_nan.csv", []string{"x"}, []string{"y"})
	fmt.Println(err)
	// Output:
	// 3 samples
	// [-0.25 100] [0]
	// data: ../testdata/xy_nan.csv:3: column 2 ("y"): "NaN" is not a finite decimal number
}

// ExampleRandomSplit splits 10 samples 60/20/20, the same way for the same
// seed.
func ExampleRandomSplit() {
	d, err := data.LoadCSV("../testdata/xy.csv", []string{"x1", "x2"}, []string{"y1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := data.RandomSplit(d.Len(), 2.0/3, 0, 1)
	train, _, test := d.Partition(s)
	fmt.Println(train.Len(), "for training,", test.Len(), "for testing")
	// Output:
	// 2 for training, 1 for testing
}

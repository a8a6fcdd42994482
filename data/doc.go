// Package data holds your own data for training: a Dataset of inputs X and
// targets Y (gonum matrices, one sample per row), LoadCSV to read one from
// a CSV file with a header, and RandomSplit to partition it into training,
// validation and test sets, reproducibly for a seed.
//
//	d, err := data.LoadCSV("plant.csv", []string{"T", "p"}, []string{"yield", "purity"})
//	if err != nil { … }
//	train, val, test := d.Partition(data.RandomSplit(d.Len(), 0.7, 0.15, 1))
//
// The package holds no benchmark problems (see package problems, whose
// generators return the same Dataset) and does not depend on the rest of
// the module.
package data

package train_test

import (
	"fmt"
	"strings"

	"github.com/enforce-nn/enforce/data"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// Hold out a validation set, stop when it stops improving, decay the
// learning rate, and write the History as CSV.
func ExampleModel_SetValidation() {
	p := problems.FittingEquality{}
	all := p.Sample(200, 1)
	trainSet, val, _ := all.Partition(data.RandomSplit(all.Len(), 0.8, 0.2, 1))
	m, err := train.New(train.Config{
		Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Standardize: true,
		Epochs: 50, LearnRate: 0.01, Schedule: train.CosineDecay(50, 0.1), Patience: 10, Quiet: true,
	})
	if err != nil {
		panic(err)
	}
	if err := m.SetValidation(val.X, val.Y); err != nil {
		panic(err)
	}
	h, err := m.Fit(trainSet.X, trainSet.Y)
	if err != nil {
		panic(err)
	}
	fmt.Println("at most 50 epochs:", len(h) <= 50)
	fmt.Println("rate at epoch 1:", h[0].LearnRate, "validation loss recorded:", h[0].ValLoss > 0)
	var csv strings.Builder
	if err := h.WriteCSV(&csv); err != nil {
		panic(err)
	}
	fmt.Println(strings.SplitN(csv.String(), "\n", 2)[0])
	// Output:
	// at most 50 epochs: true
	// rate at epoch 1: 0.01 validation loss recorded: true
	// epoch,loss,task,displacement,residual,max_residual,depth,projected,missed,val_loss,learn_rate
}

// Package layers provides backbone building blocks for ENFORCE on gorgonia
// expression graphs: fully connected layers (Dense), multilayer perceptrons
// (MLP) and per-column standardisation (Standardizer).
//
// Every builder returns (*gorgonia.Node, error) and never panics on bad
// input: shapes, dtypes and graphs are checked first, and a panic raised
// inside gorgonia while building is recovered and returned as an error.
//
// A backbone is typically built as
//
//	g := gorgonia.NewGraph()
//	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(batch, nx), gorgonia.WithName("x"))
//	mlp, err := layers.NewMLP(g, []int{nx, 64, 64, ny}, layers.ReLU, layers.Identity, layers.WithSeed(1))
//	...
//	xs, err := sx.TransformNode(g, x)       // standardised input
//	zs, err := mlp.Forward(xs)              // standardised prediction
//	yhat, err := sy.InverseNode(g, zs)      // prediction in original units
//
// where sx and sy are Standardizers fitted on the training inputs and
// labels; constraints are then evaluated and projected in original units.
//
// Dense.Predict and MLP.Predict evaluate the same network in plain Go on a
// *mat.Dense from the current weights, so a trained backbone predicts
// without a second graph.
//
//	yhat, err := mlp.Predict(x) // x: rows × nx
//
// Layers built WithDtype(tensor.Float32) run on enforce's single-precision
// matrix product (internal/sgemm's AVX-512 and AVX2/FMA kernels, split
// over the cores, with the same bits whatever GOMAXPROCS is): in a graph,
// each float32 Dense layer is one fused operation with a hand-written
// gradient (fused32.go), and MLP.Predict carries blocks of rows through
// every layer in float32 (predict32.go). Float64 layers use gorgonia's
// operations and gonum's matrix product.
//
// Names matter in gorgonia: two variable nodes with the same name, type and
// shape in one graph are silently the same node, and two constants with the
// same name are silently the same constant. Constructors here therefore pick
// a free default name ("dense", "dense_1", …; "mlp", "mlp_1", …), reject an
// explicit WithName that is already taken, and name constants after their
// content.
package layers

// Package report holds what the paper-reproduction programs under
// examples/ share: the paper's accuracy and feasibility metrics (R², MAPE,
// NRMSE, MSE, equality residuals, the percentage of infeasible predictions
// per inequality), mean ± standard deviation over seeds, text and Markdown
// tables that put the paper's numbers beside ours, PNG line and scatter
// plots (gonum.org/v1/plot; each method keeps one colour-blind-safe colour
// in every figure, see MethodColor, and the legend stands beside the
// plot), and the per-epoch training history as CSV.
//
// Metrics take predictions and targets as n×m matrices (one sample per
// row) in original units and panic on mismatched shapes, as gonum's mat
// does; a constraint that cannot be evaluated is an error.
package report

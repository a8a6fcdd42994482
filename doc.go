// Package enforce makes neural-network predictions satisfy nonlinear
// equality and inequality constraints by construction, following ENFORCE
// (Lastrucci & Schweidtmann): a backbone predicts ŷ and an adaptive-depth
// neural projection (AdaNP) repeatedly linearises c(x, y) = 0 and projects
// onto it in closed form, ỹ = ŷ − W⁻¹Bᵀ(BW⁻¹Bᵀ)⁻¹c, until the residual is
// below a tolerance.
package enforce

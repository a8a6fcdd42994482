// Package acopf provides AC optimal power flow (ACOPF) on real grids as an
// enforce problem: a reader for MATPOWER case files (Parse, ReadFile,
// Load), PGLib-OPF and MATPOWER cases shipped in the package (Names), the
// polar power-flow balance as an enforce.Constraint with exact and sparse
// derivatives (PowerFlow), the voltage and generation limits as
// inequalities (Limits), the generation cost (Model), and PGLib-OPF's own
// formulation as a sparse nonlinear programme for a reference solve (NLP).
//
// Units are per unit of the case's BaseMVA, angles radians, costs $/h.
//
// The shipped data, their licences (CC BY 4.0 for PGLib-OPF) and
// provenance are described in data/README.md.
package acopf

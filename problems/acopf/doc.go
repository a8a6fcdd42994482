// Package acopf provides AC optimal power flow (ACOPF) on real grids as an
// enforce problem.
//
//   - Data: Parse, ReadFile and Load read MATPOWER case files (any file
//     of format version 1 or 2; errors name the line); Names lists the
//     cases shipped in the package (PGLib-OPF v23.07 case57_ieee,
//     case118_ieee, case300_ieee, case1354_pegase, case2869_pegase,
//     case10000_goc, CC BY 4.0, and MATPOWER 6.0's case57), with their
//     licences and provenance in data/README.md; Published holds
//     PGLib-OPF's AC objectives.
//   - The enforce problem: Model, with inputs x = the loads (Pd, Qd of the
//     load buses, p.u.) and outputs y = (Vm, Va, Pg, Qg); its equalities
//     are PowerFlow, the polar AC power-flow balance (2·nb equations and
//     Va_ref = 0) with exact derivatives and a sparse Jacobian pattern
//     (enforce.Capabilities.Sparse); its inequalities are Limits, the
//     voltage and generation bounds, for enforce.WithInequalities; its
//     objective is the generation cost (Objective, ObjectiveGrad). Line
//     limits are not part of it, as in DC3's set-up. Model.Constraint
//     and Model.ConstraintWith (with the smoothing ε of the limits'
//     rows, ProjectionFBEpsilon for fast projections) build the system
//     AdaNP projects onto, with the variables whose bounds are equal
//     (Pinned) as equalities.
//   - The reference solve: Model.NLP is PGLib-OPF's own formulation
//     (MODEL.tex of the pglib-opf repository: thermal limits on |S|² at
//     both ends of every rated branch, angle-difference limits, voltage
//     and generation bounds, polynomial costs, reference angle), or
//     DC3's without line limits, as a solvers.SparseNLP, which
//     solvers/ipopt (build tag ipopt) solves with IPOPT. With IPOPT from
//     FlatStart it reaches PGLib-OPF's published objective of every
//     shipped PGLib case (the tagged test TestReferenceMatchesPGLib).
//     ReferenceOptimum returns IPOPT's optimum of each shipped PGLib case,
//     cached in the package, for runs without IPOPT.
//   - Projection experiments: Perturb draws operating points around an
//     optimum, and NearestPointNLP is the nearest-point problem that
//     projecting one onto Model.Constraint solves, for a reference solver
//     (docs/acopf.md compares the two on the large grids).
//
// Units are per unit of the case's BaseMVA, angles radians, costs $/h.
// Out-of-service generators and branches and isolated buses are dropped
// when a case is read, and buses are renumbered 0, 1, … in file order.
package acopf

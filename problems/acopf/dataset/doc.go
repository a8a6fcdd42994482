// Package dataset generates labelled ACOPF data sets, in shards that run
// independently (a Slurm job array, a Kubernetes Indexed Job, or one
// process), and merges and verifies them.
//
// A data set is Spec.Count samples of one case. Sample i has the loads
// LoadModel.Draw(base, seed, i), which depend only on (case, seed, i), and
// its label is the optimum y of the ACOPF at those loads from an injected
// Solver (Reference: IPOPT under the build tag ipopt, the pure-Go
// interior-point method otherwise; tests inject cheap fakes). Shard{K, Of}
// solves the indices i < Count with i mod Of = K, appending one checksummed
// line per sample to its file as soon as it is solved, so a shard that is
// stopped and started again skips the samples already in its file and
// recomputes nothing. Merge reads every shard's file, refuses any mismatch
// (headers, a missing or duplicate index, a checksum, the shards present)
// and writes the data set, which is byte for byte the file one process
// writes as Shard{0, 1}; Read reads and verifies it.
//
// # File format
//
// UTF-8 text. A header of lines "# key: value" in this order: format
// (FormatVersion), case, case-sha256 (of the uncompressed MATPOWER file),
// formulation, seed, count, load-model (LoadModel.String), solver, tol, nx,
// ny, shard ("K/OF"; a data set is "0/1"). Then one line per sample,
// fields separated by tabs:
//
//	i  ok      objective  x_1,…,x_nx  y_1,…,y_ny  crc
//	i  failed  reason                             crc
//
// with i the sample's index, the objective in $/h, x the loads (Pd then Qd
// of the load buses, p.u., as acopf.PowerFlow's x), y the operating point
// (Vm, Va, Pg, Qg, as acopf.PowerFlow's y), every number in Go's shortest
// form that reads back to the same float64 (strconv 'g', -1), "failed"
// for loads whose ACOPF the solver did not solve (ErrNoSolution, with its
// message as the reason), and crc the CRC-32C (Castagnoli), eight lower-case
// hex digits, of the bytes of the line before its last tab.
package dataset

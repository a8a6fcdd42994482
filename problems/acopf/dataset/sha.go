package dataset

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// shippedSHA256 is the SHA-256 of the uncompressed MATPOWER file of each
// case package acopf ships, as problems/acopf/data/README.md lists them
// (package acopf does not export them; TestShippedSHA256 checks this
// table against the files and against acopf.Names).
var shippedSHA256 = map[string]string{
	"matpower6_case57":          "9c3cb16784a8288b0e7be5a1d3ee5cab7fdd2433252372f4bed3acdcf514fefc",
	"pglib_opf_case57_ieee":     "aa3b48f7cbaade2afd69cb3790ef72be981db8494dcef9277bee460f754bdb22",
	"pglib_opf_case118_ieee":    "b1af0833849040c04babc3700631cff0d9afa66b79c5d3e13ae79bdf516cec78",
	"pglib_opf_case300_ieee":    "7ecf056d5942135765200ad7ae8791c28f0d35fb1dc888ba2c32dfc950f3c2f5",
	"pglib_opf_case1354_pegase": "cd6d27dff4a56684f1e4f82cfa346b36d84c4e90733228aa88331cd550e17652",
	"pglib_opf_case2869_pegase": "6c8e80fba6fc2fa78d65fce64cf4801425b01a0aa093661caf581b6551d4a7ac",
	"pglib_opf_case10000_goc":   "8387f73e8c135938c60e41538dfbb6b4cb58d37738553fb8a36c1e1647a66e7b",
}

// CaseSHA256 returns the SHA-256 (hex) of the uncompressed MATPOWER file
// of a case named as for acopf.Load: a shipped case (the prefix
// "pglib_opf_" may be left out) or the path of a file (gzip-compressed if
// its name ends in .gz).
func CaseSHA256(name string) (string, error) {
	for _, n := range []string{name, "pglib_opf_" + name} {
		if h, ok := shippedSHA256[n]; ok {
			return h, nil
		}
	}
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("dataset: CaseSHA256: %q is neither a shipped case nor a readable file: %w", name, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return "", fmt.Errorf("dataset: CaseSHA256: %s: %w", name, err)
		}
		defer z.Close()
		r = z
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("dataset: CaseSHA256: %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

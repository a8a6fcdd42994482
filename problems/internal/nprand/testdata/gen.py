# Writes numpy-1.24.2.json, the fixtures of nprand's tests, with NumPy's
# legacy global generator (np.random.seed / random / normal / uniform /
# permutation / choice). Floats are written as float.hex() so that the Go
# tests compare bits. Run with the NumPy the file name says:
#   python3 gen.py
import json
import numpy as np

out = {}
np.random.seed(17)
st = np.random.get_state()
out["seed17_key_first5"] = [int(v) for v in st[1][:5]]
out["seed17_key_last"] = int(st[1][623])
out["seed17_pos"] = int(st[2])
np.random.seed(17)
out["raw32_first8"] = [int(v) for v in np.random.randint(0, 2**32, size=8, dtype=np.uint32)]
np.random.seed(17)
out["random5"] = [float(v).hex() for v in np.random.random(5)]
np.random.seed(0)
out["seed0_normal7"] = [float(v).hex() for v in np.random.normal(0, 1., size=7)]
out["seed0_then_uniform3"] = [float(v).hex() for v in np.random.uniform(-5, 5, size=3)]
out["seed0_then_normal2"] = [float(v).hex() for v in np.random.normal(loc=0, scale=1., size=2)]
np.random.seed(4294967295)
out["seedmax_random3"] = [float(v).hex() for v in np.random.random(3)]
np.random.seed(5)
out["seed5_perm10"] = [int(v) for v in np.random.permutation(10)]
out["seed5_then_choice"] = [int(v) for v in np.random.choice(100, 50, replace=False)]

# DC3's instance recipe (datasets/simple/make_dataset.py) with the ENFORCE
# paper's x ~ U(-5, 5): seed 17, Q diagonal, p, A, X, at the paper's sizes.
for nv, ne in [(100, 50), (100, 70), (200, 150), (7, 3)]:
    np.random.seed(17)
    Q = np.random.random(nv)
    p = np.random.random(nv)
    A = np.random.normal(loc=0, scale=1., size=(ne, nv))
    X = np.random.uniform(-5, 5, size=(10000, ne))
    d = {"Q_sum": float(Q.sum()).hex(), "p_sum": float(p.sum()).hex(), "A_sum": float(A.sum()).hex(),
         "X_sum": float(X.sum()).hex(), "X_row9167": [float(v).hex() for v in X[9167, :3]]}
    if nv == 7:
        d["Q"] = [float(v).hex() for v in Q]
        d["p"] = [float(v).hex() for v in p]
        d["A"] = [float(v).hex() for v in A.ravel()]
        d["X_first2rows"] = [float(v).hex() for v in X[:2].ravel()]
    out[f"dc3_{nv}_{ne}"] = d

# The first 3000 normals of the seed-17 stream after 200 uniforms (A's
# first 30 rows at (N_O, N_C) = (100, 50)), for an entry-by-entry check.
np.random.seed(17)
np.random.random(200)
out["normals_3000"] = [float(v).hex() for v in np.random.normal(size=3000)]

with open("numpy-1.24.2.json", "w") as f:
    json.dump(out, f, indent=0)

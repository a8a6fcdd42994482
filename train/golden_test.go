package train

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
)

// TestLoadGoldenFiles loads model files written by earlier versions of
// Save (kept in the module's testdata folder; never regenerate them) and
// checks that they still load and predict what the model that wrote them
// predicted: the backbone output to rounding, the projected output to the
// inference tolerance.
func TestLoadGoldenFiles(t *testing.T) {
	// x, ŷ₁, ŷ₂, ỹ₁, ỹ₂ as printed when the file was written.
	v1 := [][5]float64{
		{-1.5, -0.7889709005184407, -1.1272593557148227, -0.3444436108480291, -2.279660350261588},
		{-0.25, -0.3609558257058428, -0.9476021619331495, -0.5086360827229568, -0.12717722461040462},
		{0.5, -0.3493951692526173, -1.0295575983770977, -0.4754664502730061, -0.30651687995426935},
		{1.75, -0.20838666753796575, -1.1511099579398891, -0.010202104333091072, -3.0625260201004627},
	}
	v2 := [][5]float64{
		{-1.5, -0.46787436164697355, -1.1343487504607592, 0.0622431301639737, -2.250968551813096},
		{-0.25, -0.2698900517957103, -0.9858581465884111, -0.5188170260770756, -0.12979277661880975},
		{0.5, -0.4111595716358709, -1.027798663863606, -0.7001706205902892, -0.3725597242627496},
		{1.75, -0.46116022708262117, -1.131989632522973, 0.34832215356574947, -3.092831965730362},
	}
	// Written with residualBuilder(1, 3, 2, 1) of backbone_test.go.
	v2custom := [][5]float64{
		{-1.5, 0.7317737563953318, -2.1087094009638427, 0.5574731723982962, -2.3276940844850604},
		{-0.25, -0.7814162383343822, -1.0018193086640816, -1.2384360413495776, -0.4459309156659523},
		{0.5, -2.042214049064973, -0.06694466636398233, -1.0763947177535367, -0.5396563971013054},
		{1.75, -2.718631672195628, 0.42009071071639603, -0.46521982324220024, -3.1166073709841973},
	}
	for _, tc := range []struct {
		file  string
		build BackboneFunc // nil for an MLP
		want  [][5]float64
	}{
		{"model_v1.json", nil, v1},
		{"model_v2.json", nil, v2},
		{"model_v2_custom.json", residualBuilder(1, 3, 2, 1), v2custom},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := problems.FittingEquality{}.Equalities()
			f, err := os.Open(filepath.Join("..", "testdata", tc.file))
			require.NoError(t, err)
			defer f.Close()
			var m *Model
			if tc.build == nil {
				m, err = Load(f, c)
			} else {
				m, err = LoadBackbone(f, c, tc.build)
			}
			require.NoError(t, err)
			for _, w := range tc.want {
				x := mat.NewDense(1, 1, []float64{w[0]})
				yhat, err := m.Backbone(x)
				require.NoError(t, err)
				assert.InDeltaSlice(t, w[1:3], yhat.RawRowView(0), 1e-14, "ŷ at x = %v", w[0])
				yt, st, err := m.Predict(x)
				require.NoError(t, err)
				assert.InDeltaSlice(t, w[3:5], yt.RawRowView(0), 1e-6, "ỹ at x = %v", w[0])
				assert.LessOrEqual(t, st.After.Max, 1e-6)
			}
		})
	}
}

// TestLoadGoldenSparse loads a model of a sparse constraint
// (sparseRing(6), enforce.PathSparse) saved before the fingerprint
// followed the nonzeros: its fingerprint, computed then from dense
// Jacobians, checks against the one evaluated now in the sparse pattern,
// so it loads with the same constraint and predicts what it predicted, and
// is refused for a ring of another coupling. The file is in train's
// testdata folder; never regenerate it.
func TestLoadGoldenSparse(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "model_v2_sparse.json"))
	require.NoError(t, err)
	require.Contains(t, string(raw), `"fingerprint"`)
	// ŷ and ỹ at x = (0.7, 0.2) and (1.3, 0.9), printed when the file was
	// written (commit 90e37c5).
	x := mat.NewDense(2, 2, []float64{0.7, 0.2, 1.3, 0.9})
	yhat := []float64{0.25488318413745287, -0.15434039517469358, 0.05248268166082382, 0.33197616475422165, -0.10015020704633362, -0.07604658147622907, -0.25683597886160625, 0.003831524067666022, -0.20164467112556092, 0.17937350703019622, 0.06726830231427419, -0.24872515807604234, 0.5311349584379881, -0.36792115206309256, 0.30351456405697985, 0.5122813936508258, 0.018695211104900168, -0.11135795178760924, -0.4469348409820775, -0.03575846230302645, -0.33112952058916983, 0.35653946847325496, 0.12212870600880045, -0.4710732665669661}
	ytilde := []float64{0.727185217416413, -0.01916851318128044, 0.5810951886212787, 0.3561763359727908, 0.7753428786042886, -0.11470217734500221, 0.8016373796750565, -0.1308901748549587, 0.7114864925449463, 0.07329386317267639, 0.8395060361667538, -0.1996103677895624, 1.2055545109077521, 0.2125540729762865, 0.9195498854503014, 0.6684574949721803, 1.3546947518946797, -0.025631628372390514, 1.439698215619601, -0.06710412657026625, 1.2901443008876596, 0.18745924884844734, 1.8505592983458519, -0.3791519979674734}

	m, err := Load(bytes.NewReader(raw), sparseRing(t, 6))
	require.NoError(t, err)
	assert.Equal(t, enforce.PathSparse, m.InferAdaNP().Settings().Path)
	got, err := m.Backbone(x)
	require.NoError(t, err)
	assert.InDeltaSlice(t, yhat, got.RawMatrix().Data, 1e-14)
	pred, st, err := m.Predict(x)
	require.NoError(t, err)
	assert.InDeltaSlice(t, ytilde, pred.RawMatrix().Data, 1e-6)
	assert.LessOrEqual(t, st.After.Max, enforce.DefaultTol)

	_, err = Load(bytes.NewReader(raw), sparseRingCoupled(t, 6, 0.2001))
	assert.ErrorIs(t, err, ErrConstraintMismatch)
}

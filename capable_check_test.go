package enforce_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/losses"
)

// sphere is y·y = 1 written by hand with a curvature method but, by
// mistake, no Capabilities method.
type sphere struct{}

func (sphere) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (sphere) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1]*y[1] - 1
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 2*y[1]
	}
}

func (sphere) HessVec(x, y, w, v, out []float64) {
	out[0], out[1] = 2*w[0]*v[0], 2*w[0]*v[1]
}

// ptrSphere has JacobianX on its pointer type only; it is passed as a
// value.
type ptrSphere struct{ sphere }

func (*ptrSphere) JacobianX(x, y, jx []float64) { jx[0] = 0 }

// capableSphere is sphere declaring its curvature.
type capableSphere struct{ sphere }

func (c capableSphere) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{HessVec: c.HessVec}
}

// plainSphere has only Dims and Eval.
type plainSphere struct{}

func (plainSphere) Dims() (nx, ny, nc int)     { return sphere{}.Dims() }
func (plainSphere) Eval(x, y, c, jy []float64) { sphere{}.Eval(x, y, c, jy) }

// TestCheckCapable checks that a constraint with methods named like
// capabilities but no Capabilities method is refused, with the fix named,
// by CheckCapable, NewAdaNP, Stack, WithInequalities and the losses, and
// that Capable and plain constraints pass.
func TestCheckCapable(t *testing.T) {
	err := enforce.CheckCapable(sphere{})
	require.Error(t, err)
	assert.Equal(t, "enforce: constraint enforce_test.sphere has methods HessVec but no Capabilities method, so none of them would be used: "+
		"implement enforce.Capable, e.g. func (c enforce_test.sphere) Capabilities() enforce.Capabilities { return enforce.Capabilities{HessVec: c.HessVec} }", err.Error())

	err = enforce.CheckCapable(ptrSphere{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has methods JacobianX, HessVec but no Capabilities method")
	assert.Error(t, enforce.CheckCapable(&ptrSphere{}))

	for _, c := range []enforce.Constraint{capableSphere{}, plainSphere{}, nil} {
		assert.NoError(t, enforce.CheckCapable(c), "%T", c)
	}
	_, err = enforce.NewAdaNP(capableSphere{}, enforce.Settings{})
	assert.NoError(t, err)

	_, err = enforce.NewAdaNP(sphere{}, enforce.Settings{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "implement enforce.Capable")

	_, err = enforce.Stack(plainSphere{}, sphere{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "implement enforce.Capable")

	_, err = enforce.WithInequalities(sphere{}, plainSphere{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "implement enforce.Capable")

	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 1), G.WithValue(tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{1, 2}))))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(mat.NewDense(2, 2, []float64{1, 0, 0, 1}).RawMatrix().Data))))
	_, err = losses.Residual(sphere{}, x, y, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "implement enforce.Capable")
	_, err = losses.Residual(plainSphere{}, x, y, 1)
	assert.NoError(t, err)
}

package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
)

// celInterruptEvery is how many comprehension iterations CEL runs between
// looks at the request's context.
const celInterruptEvery = 100

// celEnv is the one CEL environment every When expression compiles in:
// the standard library, the strings extension, and numeric comparisons
// across int and double (JSON numbers arrive as either).
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	adapter := jsonAdapter{types.DefaultTypeAdapter}
	return cel.NewEnv(
		cel.CustomTypeAdapter(adapter),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("result", cel.DynType),
		cel.Variable("text", cel.StringType),
		cel.Variable("tool", cel.StringType),
		cel.Variable("upstream", cel.StringType),
		cel.Variable("caller", cel.MapType(cel.StringType, cel.DynType)),
	)
})

// jsonAdapter lets CEL read the values decoded from JSON as they are:
// a json.Number becomes an int when it is an integer that fits, else a
// double; a JSON null (jsonNull) becomes null; and objects and arrays are
// wrapped lazily with this adapter, so their members convert the same way.
type jsonAdapter struct{ base types.Adapter }

func (a jsonAdapter) NativeToValue(v any) ref.Val {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return types.Int(i)
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !math.IsInf(f, 0) {
			return types.NewErr("number %s: %v", v, err)
		}
		return types.Double(f) // out of range: ±Inf, as ParseFloat says
	case jsonNull:
		return types.NullValue
	case map[string]any:
		return types.NewStringInterfaceMap(a, v)
	case []any:
		return types.NewDynamicList(a, v)
	}
	return a.base.NativeToValue(v)
}

// compileWhen compiles and type-checks a When expression: its type must be
// bool, or dyn (checked when it runs).
func compileWhen(expr string, costLimit uint64) (cel.Program, error) {
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("expression has type %s, want bool", t)
	}
	return env.Program(ast,
		cel.CostLimit(costLimit),
		cel.InterruptCheckFrequency(celInterruptEvery),
	)
}

// evalWhen runs a compiled When expression under ctx.
func evalWhen(ctx context.Context, prg cel.Program, vars map[string]any) (bool, error) {
	out, _, err := prg.ContextEval(ctx, vars)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("expression gave %s, want bool", out.Type().TypeName())
	}
	return bool(b), nil
}

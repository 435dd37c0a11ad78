package schema

import (
	"encoding/json"
	"math"
	"math/big"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolwire/toolwire/internal/jsonscan"
)

// The scalar checks of the walker decide only whether a scalar passes. One
// that fails is decoded and handed to the validator with its schema
// (walker.delegate), so that its violations are the validator's own, word
// for word.

// MaxCheckedExponent bounds the numbers compared exactly with a schema's
// bounds, multipleOf or numeric enum: at most this many digits, and a
// decimal exponent (the power of ten of the last digit written) within
// ±MaxCheckedExponent. Exact comparison expands a number into a big
// rational whose size grows with its exponent (1e999999 takes a tenth of a
// second and a megabit), so beyond this a number is compared by magnitude
// when that decides (1e20000 exceeds any bound a float64 can hold), and
// otherwise refused with the violation ErrNumberRange names. Numbers are
// never refused for their type: "integer" is decided exactly on the digits.
const MaxCheckedExponent = 10000

// ErrNumberRange is the message of the violation for a number that cannot
// be checked against the schema's numeric keywords (see MaxCheckedExponent).
const ErrNumberRange = "number cannot be checked against the schema: it has more than 10000 digits or a decimal exponent beyond ±10000"

// scalarType applies the checks every scalar gets first, as the validator
// does: the false schema, then the type. A failure is the scalar's only
// violation (the validator looks no further), recorded here.
func (w *walker) scalarType(p *plan, allowed bool, got string) bool {
	switch {
	case p.never:
		if !w.full() {
			w.violation(&kind.FalseSchema{})
		}
		return false
	case !allowed:
		if !w.full() {
			w.violation(&kind.Type{Got: got, Want: p.typeNames})
		}
		return false
	}
	return true
}

func (w *walker) checkString(p *plan, raw, s []byte) {
	if w.scalarType(p, p.allows(tString), "string") && p.scalarKeywords && !stringPasses(p, s) {
		w.delegate(p, raw)
	}
}

func stringPasses(p *plan, s []byte) bool {
	if p.enum != nil && !p.enum.strings[string(s)] || p.constToo != nil && !p.constToo.strings[string(s)] {
		return false
	}
	if p.format != nil && p.format.Validate(string(s)) != nil {
		return false
	}
	if p.minLength >= 0 || p.maxLength >= 0 {
		n := utf8.RuneCount(s)
		if p.minLength >= 0 && n < p.minLength || p.maxLength >= 0 && n > p.maxLength {
			return false
		}
	}
	return p.pattern == nil || p.pattern.MatchString(string(s))
}

func (w *walker) checkLiteral(p *plan, t typeSet, raw []byte) {
	got := "boolean"
	if t == tNull {
		got = "null"
	}
	if !w.scalarType(p, p.allows(t), got) {
		return
	}
	ok := true
	if p.enum != nil {
		ok = literalIn(p.enum, raw) && (p.constToo == nil || literalIn(p.constToo, raw))
	}
	if ok && p.format != nil {
		var v any // what the validator's format sees
		if raw[0] != 'n' {
			v = raw[0] == 't'
		}
		ok = p.format.Validate(v) == nil
	}
	if !ok {
		w.delegate(p, raw)
	}
}

func literalIn(vs *valueSet, raw []byte) bool {
	switch raw[0] {
	case 't':
		return vs.hasTrue
	case 'f':
		return vs.hasFalse
	}
	return vs.hasNull
}

func (w *walker) checkNumber(p *plan, raw []byte) {
	allowed := p.types == 0 || p.types&tNumber != 0
	var d decimal
	parsed := false
	if !allowed && p.types&tInteger != 0 {
		if plainInteger(raw) {
			allowed = true
		} else {
			d, parsed = parseDecimal(raw), true
			allowed = d.integral()
		}
	}
	if !w.scalarType(p, allowed, "number") || !p.scalarKeywords {
		return
	}
	if !parsed {
		d = parseDecimal(raw)
	}
	switch numberPasses(p, raw, d) {
	case verdictFail:
		w.delegate(p, raw)
	case verdictUncheckable:
		w.violationMessage(ErrNumberRange)
	}
}

// plainInteger reports whether a JSON number is written as an integer:
// digits alone, after an optional minus sign.
func plainInteger(raw []byte) bool {
	for i, c := range raw {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}

type verdict int

const (
	verdictPass verdict = iota
	verdictFail
	verdictUncheckable // too large to compare exactly, and magnitude does not decide
)

// numberBound is one of minimum, maximum, exclusiveMinimum and
// exclusiveMaximum: the bound and which comparison of a value with it
// (-1, 0, +1) breaks it.
type numberBound struct {
	bound *big.Rat
	fails func(int) bool
}

// numberBounds lists the plan's four numeric bounds, set or not, for the
// exact comparison and for the magnitude-only one of a huge number alike.
func (p *plan) numberBounds() [4]numberBound {
	return [4]numberBound{
		{p.minimum, func(c int) bool { return c < 0 }},
		{p.maximum, func(c int) bool { return c > 0 }},
		{p.exclusiveMin, func(c int) bool { return c <= 0 }},
		{p.exclusiveMax, func(c int) bool { return c >= 0 }},
	}
}

func numberPasses(p *plan, raw []byte, d decimal) verdict {
	if p.enum != nil && len(p.enum.numbers) == 0 || p.constToo != nil && len(p.constToo.numbers) == 0 {
		return verdictFail // the enum holds no number
	}
	if p.format != nil && p.format.Validate(json.Number(raw)) != nil {
		return verdictFail
	}
	huge := d.tooBig()
	var num *big.Rat
	rat := func() *big.Rat {
		if num == nil {
			num, _ = new(big.Rat).SetString(string(raw))
		}
		return num
	}
	if huge {
		// Exact comparison would expand the number; magnitude decides
		// the bounds, and nothing else is attempted.
		if p.enum != nil || p.multipleOf != nil {
			return verdictUncheckable
		}
		for _, b := range p.numberBounds() {
			if b.bound == nil {
				continue
			}
			c, ok := d.compareMagnitude(b.bound)
			if !ok || b.fails(c) {
				return verdictUncheckable
			}
		}
		return verdictPass
	}
	if p.enum != nil && !numberIn(p.enum, rat()) || p.constToo != nil && !numberIn(p.constToo, rat()) {
		return verdictFail
	}
	for _, b := range p.numberBounds() {
		if b.bound == nil {
			continue
		}
		if c, ok := compare(raw, b.bound, rat); !ok || b.fails(c) {
			return verdictFail
		}
	}
	if p.multipleOf != nil {
		r := rat()
		if r == nil || !new(big.Rat).Quo(r, p.multipleOf).IsInt() {
			return verdictFail
		}
	}
	return verdictPass
}

func numberIn(vs *valueSet, r *big.Rat) bool {
	if r == nil {
		return false
	}
	for _, n := range vs.numbers {
		if n.Cmp(r) == 0 {
			return true
		}
	}
	return false
}

// compare compares a JSON number with a bound: as integers when both are
// integers within 64 bits, else as rationals (the validator's way). ok is false for a
// number math/big cannot read (the validator then reports it).
func compare(raw []byte, bound *big.Rat, rat func() *big.Rat) (c int, ok bool) {
	if n, ok := jsonscan.Int64(raw); ok && bound.IsInt() && bound.Num().IsInt64() {
		b := bound.Num().Int64()
		switch {
		case n < b:
			return -1, true
		case n > b:
			return 1, true
		}
		return 0, true
	}
	r := rat()
	if r == nil {
		return 0, false
	}
	return r.Cmp(bound), true
}

// decimal is a JSON number taken apart: its value is
// ±(significant digits) × 10^power.
type decimal struct {
	neg      bool
	zero     bool
	sig      int   // significant digits, leading and trailing zeros dropped
	power    int64 // the power of ten of the last significant digit
	written  int   // digits written, integer and fraction
	rawPower int64 // the exponent minus the fraction's length, as math/big computes it
	expOK    bool  // the exponent fits in 64 bits, as math/big requires
}

func parseDecimal(raw []byte) decimal {
	var d decimal
	i := 0
	if raw[0] == '-' {
		d.neg = true
		i++
	}
	s := i
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	intPart := raw[s:i]
	var frac []byte
	if i < len(raw) && raw[i] == '.' {
		i++
		s = i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		frac = raw[s:i]
	}
	d.written = len(intPart) + len(frac)
	var exp int64
	d.expOK = true
	if i < len(raw) { // the exponent
		i++
		neg := false
		if raw[i] == '+' || raw[i] == '-' {
			neg = raw[i] == '-'
			i++
		}
		// The exponent as math/big reads it (strconv.ParseInt: at most
		// 2^63-1, or 2^63 when negative), clamped to ±2^62: beyond that
		// the value is out of math/big's reach either way, and the clamp
		// keeps the arithmetic below from overflowing.
		var mag uint64
		for _, c := range raw[i:] {
			if mag > (math.MaxUint64-9)/10 {
				mag = math.MaxUint64 // saturated: past any int64
			} else {
				mag = mag*10 + uint64(c-'0')
			}
		}
		d.expOK = mag < 1<<63 || neg && mag == 1<<63
		exp = int64(min(mag, 1<<62))
		if neg {
			exp = -exp
		}
	}
	d.rawPower = exp - int64(len(frac))
	// Drop trailing zeros (raising the power) and leading zeros.
	all := len(intPart) + len(frac)
	digit := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	last := all - 1
	for last >= 0 && digit(last) == '0' {
		last--
	}
	if last < 0 {
		d.zero = true
		return d
	}
	first := 0
	for digit(first) == '0' {
		first++
	}
	d.sig = last - first + 1
	d.power = d.rawPower + int64(all-1-last)
	return d
}

// integral reports whether the number has an integer value (1.0 and 1e2
// do) as the validator decides it with math/big, which also refuses
// exponents it deems too large (such a number is no integer to it).
func (d decimal) integral() bool {
	if !d.expOK {
		return false
	}
	if d.zero {
		return true
	}
	if d.rawPower < -1e6 || d.rawPower > 1e6 {
		return false
	}
	return d.power >= 0
}

// tooBig reports whether exact comparison would expand the number beyond
// MaxCheckedExponent.
func (d decimal) tooBig() bool {
	return !d.expOK || d.written > MaxCheckedExponent || d.rawPower < -MaxCheckedExponent || d.rawPower > MaxCheckedExponent
}

// compareMagnitude compares the number with a bound by orders of magnitude
// alone; ok is false when they are too close for that, or the bound is
// beyond a float64.
func (d decimal) compareMagnitude(bound *big.Rat) (int, bool) {
	if !d.expOK {
		return 0, false
	}
	bs := bound.Sign()
	if d.zero {
		return -bs, true
	}
	sign := 1
	if d.neg {
		sign = -1
	}
	if bs == 0 {
		return sign, true
	}
	f, _ := bound.Float64()
	if f == 0 || math.IsInf(f, 0) {
		return 0, false
	}
	// |number| lies in [10^(order-1), 10^order).
	order := d.power + int64(d.sig)
	bOrder := int64(math.Floor(math.Log10(math.Abs(f)))) + 1
	switch {
	case order > bOrder+1: // |number| > |bound|
		return sign, true
	case order < bOrder-1: // |number| < |bound|
		return -bs, true
	}
	return 0, false
}

// delegate hands a scalar that failed to the validator with its schema:
// the violations are the validator's, placed at the scalar's path. A
// scalar the validator accepts after all is not a violation.
func (w *walker) delegate(p *plan, raw []byte) {
	if w.full() {
		return
	}
	v, err := DecodeValue(raw)
	if err != nil {
		return
	}
	w.add(validateWith(p.sch, v, w.pathString()))
}

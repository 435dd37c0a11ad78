package schema

// ApplyDefaults fills absent object properties that declare a "default", at
// the root and inside nested objects the value already has. It reports whether
// it changed anything. Defaults reached only through $ref, oneOf and similar
// are not applied: which branch holds is not known before validation.
func (s *Schema) ApplyDefaults(v any) bool {
	return applyDefaults(s.doc, v)
}

func applyDefaults(sch, v any) bool {
	sm, ok := sch.(map[string]any)
	if !ok {
		return false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	props, _ := sm["properties"].(map[string]any)
	changed := false
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			continue
		}
		cur, present := obj[name]
		if !present {
			if d, has := ps["default"]; has {
				obj[name] = deepCopy(d)
				changed = true
			}
			continue
		}
		if applyDefaults(ps, cur) {
			changed = true
		}
	}
	return changed
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

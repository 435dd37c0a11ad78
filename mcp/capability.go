package mcp

// Has reports whether the client declared the named capability ("roots",
// "sampling", "elicitation", "tasks", or an experimental one).
func (c ClientCapabilities) Has(name string) bool {
	switch name {
	case "roots":
		return c.Roots != nil
	case "sampling":
		return len(c.Sampling) > 0 && string(c.Sampling) != "null"
	case "elicitation":
		return len(c.Elicitation) > 0 && string(c.Elicitation) != "null"
	case "tasks":
		return len(c.Tasks) > 0 && string(c.Tasks) != "null"
	}
	_, ok := c.Experimental[name]
	return ok
}

// HasExtension reports whether the client declared the extension id under
// capabilities.extensions.
func (c ClientCapabilities) HasExtension(id string) bool {
	v, ok := c.Extensions[id]
	return ok && string(v) != "null"
}

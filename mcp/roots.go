package mcp

// Server-to-client request methods (2025-era sessions).
const (
	MethodListRoots         = "roots/list"
	MethodCreateMessage     = "sampling/createMessage"
	MethodElicitationCreate = "elicitation/create"

	NotificationRootsListChanged = "notifications/roots/list_changed"
)

// Root is a directory or file the client exposes to the server.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitempty"`
}

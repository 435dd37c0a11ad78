package mcp

import "encoding/json"

// Implementation names a client or server.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

// ClientCapabilities is what a client declares. Sub-objects toolwire does not
// interpret are kept raw so nothing a client sends is lost.
type ClientCapabilities struct {
	Roots        *ListChangedCapability     `json:"roots,omitempty"`
	Sampling     json.RawMessage            `json:"sampling,omitempty"`
	Elicitation  json.RawMessage            `json:"elicitation,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListChangedCapability is a capability whose only property is listChanged.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability declares resource support.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// EmptyCapability is a capability with no properties, sent as {}.
type EmptyCapability struct{}

// ServerCapabilities is what a server declares.
type ServerCapabilities struct {
	Tools        *ListChangedCapability     `json:"tools,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Prompts      *ListChangedCapability     `json:"prompts,omitempty"`
	Logging      *EmptyCapability           `json:"logging,omitempty"`
	Completions  *EmptyCapability           `json:"completions,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// InitializeParams open a legacy session.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// InitializeResult answers initialize with the negotiated version.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// DiscoverResult answers server/discover (2026-07-28). The server's identity
// travels in _meta under MetaServerInfo.
type DiscoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	TTLMs             *int64             `json:"ttlMs,omitempty"`
	CacheScope        CacheScope         `json:"cacheScope,omitempty"`
	ResultType        ResultType         `json:"resultType,omitempty"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// SubscriptionFilter names the notifications a subscriptions/listen stream
// wants (2026-07-28).
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are tasks whose status changes the client wants as
	// notifications/tasks (the tasks extension).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// ListenParams are the params of subscriptions/listen.
type ListenParams struct {
	Notifications *SubscriptionFilter `json:"notifications"`
	Meta          Meta                `json:"_meta,omitempty"`
}

// ListenAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged: the subset the server honours.
type ListenAcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// ResultType tells a 2026-07-28 client what kind of result it got.
type ResultType string

// Result types.
const (
	ResultComplete      ResultType = "complete"
	ResultInputRequired ResultType = "input_required"
	ResultTask          ResultType = "task"
)

// EmptyResult is the result of ping and other requests that return nothing.
type EmptyResult struct {
	ResultType ResultType `json:"resultType,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// Method names.
const (
	MethodInitialize         = "initialize"
	MethodPing               = "ping"
	MethodDiscover           = "server/discover"
	MethodListTools          = "tools/list"
	MethodCallTool           = "tools/call"
	MethodSubscriptionListen = "subscriptions/listen"

	NotificationInitialized      = "notifications/initialized"
	NotificationCancelled        = "notifications/cancelled"
	NotificationProgress         = "notifications/progress"
	NotificationToolsListChanged = "notifications/tools/list_changed"
	NotificationMessage          = "notifications/message"
	NotificationListenAck        = "notifications/subscriptions/acknowledged"
)

package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// MethodSetLevel sets a 2025-era session's log level.
const MethodSetLevel = "logging/setLevel"

// LoggingLevel is a log message severity, the syslog levels of RFC 5424.
type LoggingLevel string

// Logging levels, least severe first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

var levelRank = map[LoggingLevel]int{
	LevelDebug: 1, LevelInfo: 2, LevelNotice: 3, LevelWarning: 4,
	LevelError: 5, LevelCritical: 6, LevelAlert: 7, LevelEmergency: 8,
}

// Rank orders levels from 1 (debug) to 8 (emergency); 0 for an unknown
// level.
func (l LoggingLevel) Rank() int { return levelRank[l] }

// Valid reports whether l is one of the eight levels.
func (l LoggingLevel) Valid() bool { return levelRank[l] != 0 }

// AtLeast reports whether a message at level l passes a threshold.
func (l LoggingLevel) AtLeast(threshold LoggingLevel) bool {
	return l.Valid() && threshold.Valid() && l.Rank() >= threshold.Rank()
}

// UnmarshalJSON accepts only the eight levels.
func (l *LoggingLevel) UnmarshalJSON(data []byte) error {
	var s string
	if err := wirejson.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("logging level must be a string: %w", err)
	}
	if !LoggingLevel(s).Valid() {
		return fmt.Errorf("unknown logging level %q (want debug, info, notice, warning, error, critical, alert or emergency)", s)
	}
	*l = LoggingLevel(s)
	return nil
}

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	Level LoggingLevel `json:"level"`
	Meta  Meta         `json:"_meta,omitempty"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Level  LoggingLevel    `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
	Meta   Meta            `json:"_meta,omitempty"`
}

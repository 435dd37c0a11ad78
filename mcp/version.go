package mcp

import "slices"

// Protocol revisions toolwire speaks.
const (
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// LatestLegacyVersion is the newest revision negotiated by initialize.
const LatestLegacyVersion = Version20251125

// LatestVersion is the newest revision toolwire speaks.
const LatestVersion = Version20260728

// Era tells the two protocol families apart: legacy sessions opened by
// initialize (2025-11-25 and older) and modern stateless requests that carry
// their version in _meta (2026-07-28 and newer).
type Era int

// The eras. The zero value, EraAuto, is no era: as a client option it means
// "find out" (probe with server/discover, fall back to initialize).
const (
	EraAuto Era = iota
	EraLegacy
	EraModern
)

func (e Era) String() string {
	switch e {
	case EraLegacy:
		return "legacy"
	case EraModern:
		return "modern"
	case EraAuto:
		return "auto"
	}
	return "unknown"
}

// LegacyVersions are the revisions initialize accepts, newest first.
var LegacyVersions = []string{Version20251125, Version20250618, Version20250326}

// ModernVersions are the revisions served statelessly, newest first.
var ModernVersions = []string{Version20260728}

// SupportedVersions lists every revision, newest first, as server/discover
// and the -32022 error report them.
func SupportedVersions() []string {
	return append(slices.Clone(ModernVersions), LegacyVersions...)
}

// EraOf returns the era of a revision, or 0 for one toolwire does not speak.
func EraOf(version string) Era {
	switch {
	case slices.Contains(ModernVersions, version):
		return EraModern
	case slices.Contains(LegacyVersions, version):
		return EraLegacy
	}
	return 0
}

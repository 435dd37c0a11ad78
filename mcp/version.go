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

var (
	legacyVersions = []string{Version20251125, Version20250618, Version20250326}
	modernVersions = []string{Version20260728}
)

// LegacyVersions returns the revisions initialize accepts, newest first.
func LegacyVersions() []string { return slices.Clone(legacyVersions) }

// ModernVersions returns the revisions served statelessly, newest first.
func ModernVersions() []string { return slices.Clone(modernVersions) }

// SupportedVersions lists every revision, newest first, as server/discover
// and the -32022 error report them.
func SupportedVersions() []string {
	return append(slices.Clone(modernVersions), legacyVersions...)
}

// EraOf returns the era of a revision, or EraAuto (no era) for one toolwire
// does not speak.
func EraOf(version string) Era {
	switch {
	case slices.Contains(modernVersions, version):
		return EraModern
	case slices.Contains(legacyVersions, version):
		return EraLegacy
	}
	return EraAuto
}

package daemon

import (
	"errors"
	"log/slog"

	"github.com/toolwire/toolwire/internal/exepages"
)

// releaseStartupPages gives back the binary's pages start-up touched
// (WithStartupPagesReleased), logging what it did at debug level; a
// platform that cannot is not an error.
func releaseStartupPages(logger *slog.Logger) {
	st, err := exepages.Release()
	switch {
	case errors.Is(err, exepages.ErrUnsupported):
		logger.Debug("start-up pages of the binary kept", "reason", err)
	case err != nil:
		logger.Warn("giving back the start-up pages of the binary", "error", err)
	default:
		logger.Debug("gave back the start-up pages of the binary", "rss_file_before", st.Before, "rss_file_after", st.After)
	}
}

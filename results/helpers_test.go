package results

import "time"

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

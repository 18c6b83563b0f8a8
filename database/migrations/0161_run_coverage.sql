-- What each results run counted and left out, and why (issue 16 point 3):
-- coverage holds results.Coverage as JSON; no_results says why a completed
-- run has no result rows.
ALTER TABLE result_runs ADD COLUMN coverage {{json}};
ALTER TABLE result_runs ADD COLUMN no_results TEXT NOT NULL DEFAULT '';

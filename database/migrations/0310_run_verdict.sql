-- The verdict of a results run (issue 31 point 2): verdict.Verdict as
-- JSON, decided after publication from the run's rows and the config
-- version it analysed.
ALTER TABLE result_runs ADD COLUMN verdict {{json}};

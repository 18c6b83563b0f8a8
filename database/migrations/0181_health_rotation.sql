-- When the hourly guardrail health run last checked a running experiment
-- (issue 14, docs/lifecycle.md "Hourly health run"): with more running
-- experiments in an org than the run's cap of 20, it takes the least
-- recently checked first (never checked: as if checked at creation), so
-- every one is checked within ceil(n/20) hours.
ALTER TABLE experiments ADD COLUMN last_health_checked_at {{timestamp}};

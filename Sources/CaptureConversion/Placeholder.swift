// CaptureConversion: filled in by its issue.

// CaptureVP8: filled in by its issue.

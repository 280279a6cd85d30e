// CaptureV4L2: filled in by its issue.

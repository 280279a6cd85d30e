/// The preview page served at `/`.
public enum PreviewPage {
    /// The page's HTML, scripts included.
    public static let html = "<!doctype html><title>Preview</title>"
}

/// Why the preview page could not be put together from its resource files (this module's bundle, `Resources/`): each
/// case names the file. The server answers `/` with 500 and the ``description``.
public enum PreviewPageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is not in the resource bundle (a build or an installation that left it out).
    case missing(String)
    /// The file is there but could not be read (the file, the reason).
    case unreadable(String, reason: String)
    /// The file is not UTF-8.
    case notUTF8(String)
    /// `preview.html` does not load this script with the `<script src>` element that the script replaces.
    case scriptNotLoaded(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .missing(let file): "the preview page's resource \(file) is missing from CapturePreview's bundle"
        case .unreadable(let file, let reason): "the preview page's resource \(file) cannot be read: \(reason)"
        case .notUTF8(let file): "the preview page's resource \(file) is not UTF-8"
        case .scriptNotLoaded(let file): "the preview page's preview.html does not load \(file)"
        }
    }
}

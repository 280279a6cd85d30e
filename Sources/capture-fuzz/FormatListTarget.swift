import CaptureCore
import CaptureFileCameras

extension FuzzTarget {
    /// The `v4l2-ctl --list-formats-ext` parser (``V4L2FormatList/parse(_:)``), bytes taken as UTF-8 text.
    ///
    /// Invariant: a list that parses renders to text that parses back to the same rendering.
    static let formatList = FuzzTarget(name: "format-list") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard let list = try? V4L2FormatList.parse(text) else { return }
        let rendered = list.render()
        guard let again = try? V4L2FormatList.parse(rendered) else {
            preconditionFailure("a parsed list renders to text that does not parse:\n\(rendered)")
        }
        precondition(again.render() == rendered, "render → parse → render changed the text:\n\(rendered)")
    }
}

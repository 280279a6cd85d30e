import CaptureCore
import CaptureFileCameras

extension FuzzTarget {
    /// The `v4l2-ctl --list-ctrls-menus` parser (``V4L2ControlList/parse(_:)``, every layout it reads), bytes taken as
    /// UTF-8 text.
    ///
    /// Invariant: a list that parses renders to text that parses back to the same rendering.
    static let controlList = FuzzTarget(name: "control-list") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard let list = try? V4L2ControlList.parse(text) else { return }
        let rendered = list.render()
        guard let again = try? V4L2ControlList.parse(rendered) else {
            preconditionFailure("a parsed control list renders to text that does not parse:\n\(rendered)")
        }
        precondition(again.render() == rendered, "render → parse → render changed the text:\n\(rendered)")
    }
}

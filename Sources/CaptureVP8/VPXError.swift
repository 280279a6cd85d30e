import CaptureCore
internal import CVPX

/// Builds the `CaptureError` for a failed libvpx call: libvpx's error string and detail, and the call's name.
func vpxError(
    _ code: CaptureError.Code, _ what: String, status: vpx_codec_err_t, context: UnsafeMutablePointer<vpx_codec_ctx_t>?,
    call: String
) -> CaptureError {
    var text = "\(what): " + String(cString: vpx_codec_err_to_string(status))
    if let context, let detail = vpx_codec_error_detail(context) {
        text += " (\(String(cString: detail)))"
    }
    return CaptureError(code, text, call: call)
}

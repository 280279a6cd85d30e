/// Ids of the standard V4L2 controls the ``CameraControls`` facade uses (`V4L2_CID_*` in
/// `linux/v4l2-controls.h`; these numbers are part of the kernel's stable interface).
public enum V4L2ControlID {
    /// `V4L2_CID_BRIGHTNESS`.
    public static let brightness: UInt32 = 0x0098_0900
    /// `V4L2_CID_CONTRAST`.
    public static let contrast: UInt32 = 0x0098_0901
    /// `V4L2_CID_SATURATION`.
    public static let saturation: UInt32 = 0x0098_0902
    /// `V4L2_CID_HUE`.
    public static let hue: UInt32 = 0x0098_0903
    /// `V4L2_CID_AUTO_WHITE_BALANCE`.
    public static let autoWhiteBalance: UInt32 = 0x0098_090c
    /// `V4L2_CID_GAMMA`.
    public static let gamma: UInt32 = 0x0098_0910
    /// `V4L2_CID_AUTOGAIN`.
    public static let autoGain: UInt32 = 0x0098_0912
    /// `V4L2_CID_GAIN`.
    public static let gain: UInt32 = 0x0098_0913
    /// `V4L2_CID_POWER_LINE_FREQUENCY`.
    public static let powerLineFrequency: UInt32 = 0x0098_0918
    /// `V4L2_CID_HUE_AUTO`.
    public static let autoHue: UInt32 = 0x0098_0919
    /// `V4L2_CID_WHITE_BALANCE_TEMPERATURE`.
    public static let whiteBalanceTemperature: UInt32 = 0x0098_091a
    /// `V4L2_CID_SHARPNESS`.
    public static let sharpness: UInt32 = 0x0098_091b
    /// `V4L2_CID_BACKLIGHT_COMPENSATION`.
    public static let backlightCompensation: UInt32 = 0x0098_091c
    /// `V4L2_CID_EXPOSURE_AUTO`.
    public static let exposureAuto: UInt32 = 0x009a_0901
    /// `V4L2_CID_EXPOSURE_ABSOLUTE`, in units of 100 µs.
    public static let exposureAbsolute: UInt32 = 0x009a_0902
    /// `V4L2_CID_PAN_ABSOLUTE`, in arc seconds.
    public static let panAbsolute: UInt32 = 0x009a_0908
    /// `V4L2_CID_TILT_ABSOLUTE`, in arc seconds.
    public static let tiltAbsolute: UInt32 = 0x009a_0909
    /// `V4L2_CID_FOCUS_ABSOLUTE`.
    public static let focusAbsolute: UInt32 = 0x009a_090a
    /// `V4L2_CID_FOCUS_AUTO`.
    public static let focusAuto: UInt32 = 0x009a_090c
    /// `V4L2_CID_ZOOM_ABSOLUTE`.
    public static let zoomAbsolute: UInt32 = 0x009a_090d

    /// Manual controls and the automatic mode that makes them inactive: (manual id, automatic id, the automatic
    /// control's values under which the manual one is active). UVC marks the manual control inactive otherwise.
    package static let automaticModes: [(manual: UInt32, automatic: UInt32, activeWhen: Set<Int64>)] = [
        (exposureAbsolute, exposureAuto, [1]), (focusAbsolute, focusAuto, [0]),
        (whiteBalanceTemperature, autoWhiteBalance, [0]), (gain, autoGain, [0]), (hue, autoHue, [0]),
    ]

    /// The ids of standard controls by their `v4l2-ctl` names, old and new (kernels before 5.16 named
    /// `exposure_auto`, `focus_auto`, `white_balance_temperature_auto` what they now call `auto_exposure`,
    /// `focus_automatic_continuous`, `white_balance_automatic`). Dumps without hex ids get their ids from here.
    package static let standardKeys: [String: UInt32] = [
        "brightness": brightness, "contrast": contrast, "saturation": saturation, "hue": hue,
        "white_balance_temperature_auto": autoWhiteBalance, "white_balance_automatic": autoWhiteBalance,
        "auto_white_balance": autoWhiteBalance, "gamma": gamma, "gain_automatic": autoGain, "gain": gain,
        "power_line_frequency": powerLineFrequency, "hue_auto": autoHue, "hue_automatic": autoHue,
        "white_balance_temperature": whiteBalanceTemperature, "sharpness": sharpness,
        "backlight_compensation": backlightCompensation, "exposure_auto": exposureAuto,
        "auto_exposure": exposureAuto, "exposure_absolute": exposureAbsolute,
        "exposure_time_absolute": exposureAbsolute, "exposure_auto_priority": 0x009a_0903,
        "exposure_dynamic_framerate": 0x009a_0903, "pan_absolute": panAbsolute, "tilt_absolute": tiltAbsolute,
        "focus_absolute": focusAbsolute, "focus_auto": focusAuto, "focus_automatic_continuous": focusAuto,
        "zoom_absolute": zoomAbsolute, "horizontal_flip": 0x0098_0914, "vertical_flip": 0x0098_0915,
        "red_balance": 0x0098_090e, "blue_balance": 0x0098_090f, "exposure": 0x0098_0911,
    ]
}

/// An id written as `0x00980900` or `9963776`.
package func controlID(_ text: String) -> UInt32? {
    if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt32(text.dropFirst(2), radix: 16) }
    return text.first?.isNumber == true ? UInt32(text) : nil
}

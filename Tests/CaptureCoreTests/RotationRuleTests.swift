import CaptureCore
import Testing

@Suite("Rotation rule (RTCCameraVideoCapturer's table)")
struct RotationRuleTests {
    /// Every (orientation, position) cell; `nil` means the previous rotation is kept.
    static let table: [(DeviceOrientation, CameraPosition, VideoRotation?)] = [
        (.portrait, .front, .degrees90), (.portrait, .back, .degrees90),
        (.portrait, .external, .degrees90), (.portrait, .unspecified, .degrees90),
        (.portraitUpsideDown, .front, .degrees270), (.portraitUpsideDown, .back, .degrees270),
        (.portraitUpsideDown, .external, .degrees270), (.portraitUpsideDown, .unspecified, .degrees270),
        (.landscapeLeft, .front, .degrees180), (.landscapeLeft, .back, .degrees0),
        (.landscapeLeft, .external, .degrees0), (.landscapeLeft, .unspecified, .degrees0),
        (.landscapeRight, .front, .degrees0), (.landscapeRight, .back, .degrees180),
        (.landscapeRight, .external, .degrees180), (.landscapeRight, .unspecified, .degrees180),
        (.faceUp, .front, nil), (.faceUp, .back, nil), (.faceUp, .external, nil), (.faceUp, .unspecified, nil),
        (.faceDown, .front, nil), (.faceDown, .back, nil), (.faceDown, .external, nil), (.faceDown, .unspecified, nil),
        (.unknown, .front, nil), (.unknown, .back, nil), (.unknown, .external, nil), (.unknown, .unspecified, nil),
    ]

    @Test("the table covers all 7 × 4 cells")
    func complete() {
        #expect(Self.table.count == DeviceOrientation.allCases.count * CameraPosition.allCases.count)
        for orientation in DeviceOrientation.allCases {
            for position in CameraPosition.allCases {
                #expect(Self.table.contains { $0.0 == orientation && $0.1 == position })
            }
        }
    }

    @Test("each cell, from each previous rotation", arguments: 0..<28)
    func cell(_ index: Int) {
        let (orientation, position, expected) = Self.table[index]
        for previous in VideoRotation.allCases {
            let rotation = CaptureRules.rotation(for: orientation, position: position, previous: previous)
            #expect(rotation == (expected ?? previous), "\(orientation) \(position) previous \(previous)")
        }
    }

    @Test("a sequence: face up after landscape keeps the landscape rotation")
    func sequence() {
        var rotation = VideoRotation.degrees90  // WebRTC's initial state: portrait
        for orientation: DeviceOrientation in [.landscapeLeft, .faceUp, .unknown, .faceDown] {
            rotation = CaptureRules.rotation(for: orientation, position: .front, previous: rotation)
        }
        #expect(rotation == .degrees180)
    }

    @Test(
        "VideoRotation from degrees and addition",
        arguments: [
            (-90, VideoRotation?.some(.degrees270)), (0, .degrees0), (450, .degrees90), (720, .degrees0),
            (45, nil), (-180, .degrees180),
        ])
    func degrees(_ degrees: Int, _ expected: VideoRotation?) {
        #expect(VideoRotation(degrees: degrees) == expected)
    }

    @Test("rotations add modulo 360")
    func adding() {
        #expect(VideoRotation.degrees270.adding(.degrees180) == .degrees90)
        #expect(VideoRotation.degrees90.adding(.degrees270) == .degrees0)
        #expect(size(1280, 720).applying(.degrees90) == size(720, 1280))
        #expect(size(1280, 720).applying(.degrees180) == size(1280, 720))
    }
}

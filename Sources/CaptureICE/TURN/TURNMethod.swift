/// The STUN methods a TURN client uses (RFC 8656 §17), besides `STUNMessage/binding`.
package enum TURNMethod {
    /// Allocate (0x003): create an allocation on the server.
    package static let allocate: UInt16 = 0x003
    /// Refresh (0x004): extend an allocation's lifetime, or delete it with LIFETIME 0.
    package static let refresh: UInt16 = 0x004
    /// Send (0x006): an indication carrying a datagram to a peer.
    package static let send: UInt16 = 0x006
    /// Data (0x007): an indication carrying a datagram from a peer.
    package static let data: UInt16 = 0x007
    /// CreatePermission (0x008): let a peer's IP address send to the allocation.
    package static let createPermission: UInt16 = 0x008
    /// ChannelBind (0x009): bind a channel number to a peer, for ChannelData framing.
    package static let channelBind: UInt16 = 0x009
}

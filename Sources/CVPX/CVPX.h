// Header-only shim for libvpx. No logic lives here: only what Swift cannot import.
#ifndef CVPX_H
#define CVPX_H

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

// vpx_codec_enc_init, vpx_codec_dec_init and vpx_codec_control are function-like macros.
static inline vpx_codec_err_t cvpx_codec_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                                  const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, iface, cfg, flags);
}
static inline vpx_codec_err_t cvpx_codec_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                                  const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_dec_init(ctx, iface, cfg, flags);
}
// vpx_codec_control is variadic; one typed wrapper per argument type we pass.
static inline vpx_codec_err_t cvpx_codec_control_int(vpx_codec_ctx_t *ctx, int control, int value) {
    return vpx_codec_control_(ctx, control, value);
}
static inline vpx_codec_err_t cvpx_codec_control_uint(vpx_codec_ctx_t *ctx, int control, unsigned int value) {
    return vpx_codec_control_(ctx, control, value);
}
static inline vpx_codec_err_t cvpx_codec_control_int_ptr(vpx_codec_ctx_t *ctx, int control, int *value) {
    return vpx_codec_control_(ctx, control, value);
}

// Compound macros.
static const int CVPX_DL_REALTIME = VPX_DL_REALTIME;
static const long CVPX_EFLAG_FORCE_KF = VPX_EFLAG_FORCE_KF;
static const unsigned int CVPX_FRAME_IS_KEY = VPX_FRAME_IS_KEY;
static const unsigned int CVPX_FRAME_IS_DROPPABLE = VPX_FRAME_IS_DROPPABLE;
// Per-frame reference and update flags (temporal layers).
static const long CVPX_EFLAG_NO_REF_GF = VP8_EFLAG_NO_REF_GF;
static const long CVPX_EFLAG_NO_UPD_LAST = VP8_EFLAG_NO_UPD_LAST;
static const long CVPX_EFLAG_NO_UPD_GF = VP8_EFLAG_NO_UPD_GF;
static const long CVPX_EFLAG_NO_UPD_ARF = VP8_EFLAG_NO_UPD_ARF;
static const unsigned int CVPX_ERROR_RESILIENT_DEFAULT = VPX_ERROR_RESILIENT_DEFAULT;

#endif

// Header-only shim for libv4l2 and the V4L2 uAPI. No logic lives here: only what Swift cannot import.
#ifndef CV4L2_H
#define CV4L2_H

#include <linux/videodev2.h>
#include <libv4l2.h>
#include <sys/ioctl.h>
#include <stddef.h>

// v4l2_ioctl is variadic, which Swift cannot call.
static inline int cv4l2_ioctl(int fd, unsigned long request, void *argument) {
    return v4l2_ioctl(fd, request, argument);
}

// The request codes are _IOWR(...) macros, which Swift cannot import.
static const unsigned long CV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CV4L2_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long CV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CV4L2_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long CV4L2_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long CV4L2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long CV4L2_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CV4L2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CV4L2_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long CV4L2_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
static const unsigned long CV4L2_VIDIOC_TRY_EXT_CTRLS = VIDIOC_TRY_EXT_CTRLS;
static const unsigned long CV4L2_VIDIOC_SUBSCRIBE_EVENT = VIDIOC_SUBSCRIBE_EVENT;
static const unsigned long CV4L2_VIDIOC_UNSUBSCRIBE_EVENT = VIDIOC_UNSUBSCRIBE_EVENT;
static const unsigned long CV4L2_VIDIOC_DQEVENT = VIDIOC_DQEVENT;
static const unsigned long CV4L2_VIDIOC_G_INPUT = VIDIOC_G_INPUT;
static const unsigned long CV4L2_VIDIOC_S_INPUT = VIDIOC_S_INPUT;

// Control ids built from macros (V4L2_CID_CAMERA_CLASS_BASE + n) that Swift does not import.
static const unsigned int CV4L2_CID_CAMERA_ORIENTATION = V4L2_CID_CAMERA_ORIENTATION;
static const unsigned int CV4L2_CID_CAMERA_SENSOR_ROTATION = V4L2_CID_CAMERA_SENSOR_ROTATION;
static const unsigned int CV4L2_CID_USER_BASE = V4L2_CID_USER_BASE;

// 0x80000000 does not fit the Int32 Swift gives other flag macros; typed here as the u32 `id` field it is ORed into.
static const unsigned int CV4L2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const unsigned int CV4L2_CTRL_FLAG_NEXT_COMPOUND = V4L2_CTRL_FLAG_NEXT_COMPOUND;

// Extended controls: which values to get or set, and the event type and flags for control changes.
static const unsigned int CV4L2_CTRL_WHICH_CUR_VAL = V4L2_CTRL_WHICH_CUR_VAL;
static const unsigned int CV4L2_EVENT_CTRL = V4L2_EVENT_CTRL;
static const unsigned int CV4L2_EVENT_SUB_FL_ALLOW_FEEDBACK = V4L2_EVENT_SUB_FL_ALLOW_FEEDBACK;

// struct v4l2_ext_control is packed (its 8-byte value union sits at offset 12), which Swift cannot lay out as a
// Swift struct; the ioctl layer fills an array of them as bytes at these offsets.
static const unsigned long CV4L2_EXT_CONTROL_SIZE = sizeof(struct v4l2_ext_control);
static const unsigned long CV4L2_EXT_CONTROL_ID_OFFSET = offsetof(struct v4l2_ext_control, id);
static const unsigned long CV4L2_EXT_CONTROL_SIZE_OFFSET = offsetof(struct v4l2_ext_control, size);
static const unsigned long CV4L2_EXT_CONTROL_VALUE_OFFSET = offsetof(struct v4l2_ext_control, value);

// libv4l2 flags for v4l2_fd_open.
static const int CV4L2_DISABLE_CONVERSION = V4L2_DISABLE_CONVERSION;

#endif

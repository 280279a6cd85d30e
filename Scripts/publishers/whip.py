"""What the benchmark publishers (gst_whip_publish.py, aiortc_whip_publish.py) share: the WHIP exchange (POST the
complete offer, DELETE the resource; RFC 9725, no trickle) and the process's CPU time. Standard library only."""
import resource
import urllib.error
import urllib.parse
import urllib.request


def cpu_seconds():
    """User + system CPU time of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def post_offer(url, sdp, timeout=10):
    """POSTs `sdp` (application/sdp) to the WHIP endpoint `url`; returns (answer SDP, resource URL or None).
    Raises RuntimeError for an answer other than 201, urllib.error.URLError or OSError when the request fails."""
    request = urllib.request.Request(url, data=sdp.encode(), method="POST", headers={"Content-Type": "application/sdp"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        if response.status != 201:
            raise RuntimeError(f"WHIP POST answered {response.status}")
        location = response.headers.get("Location")
        return response.read().decode(), urllib.parse.urljoin(url, location) if location else None


def delete(location, timeout=10):
    """DELETEs the WHIP resource; returns the status, or the error's text."""
    try:
        with urllib.request.urlopen(urllib.request.Request(location, method="DELETE"), timeout=timeout) as response:
            return response.status
    except (urllib.error.URLError, OSError) as error:
        return str(error)

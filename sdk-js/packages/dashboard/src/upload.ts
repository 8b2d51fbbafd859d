// Uploads with progress: fetch() reports none, so long uploads (records import, plugin modules)
// go through XMLHttpRequest with the session's CSRF token.
import { ApiError, currentCSRF } from './api';

/** POSTs body to url as contentType; onProgress gets 0..100; resolves to the decoded answer. */
export function upload(url: string, body: Blob, contentType: string, onProgress: (p: number) => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('POST', url);
    x.withCredentials = true;
    x.setRequestHeader('Content-Type', contentType);
    x.setRequestHeader('Accept', 'application/json');
    if (currentCSRF()) x.setRequestHeader('X-CSRF-Token', currentCSRF());
    x.upload.onprogress = (e) => e.lengthComputable && onProgress(Math.round((e.loaded / e.total) * 100));
    x.onerror = () => reject(new ApiError(0, 'NETWORK', 'The gateway did not answer (network error).'));
    x.onload = () => {
      let answer: { message?: string; error?: string; details?: ApiError['details'] } | null = null;
      try {
        answer = JSON.parse(x.responseText);
      } catch {
        /* not JSON */
      }
      if (x.status >= 200 && x.status < 300) resolve(answer ?? x.responseText);
      else reject(new ApiError(x.status, answer?.error ?? '', answer?.message ?? `${x.status} ${x.statusText}`, answer?.details));
    };
    x.send(body);
  });
}

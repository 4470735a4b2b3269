import { HEADERS } from "../contract/index.js";
import { defineCheck, header } from "./define.js";

/** PROFILE §6: a 401 carries WWW-Authenticate: Bearer. */
export default defineCheck({
  id: "www-authenticate",
  clause: "auth.required",
  applies: (ex) => ex.response.status === 401,
  run: (ex) => {
    const value = header(ex, HEADERS.wwwAuthenticate) ?? "";
    return /^bearer\b/i.test(value.trim())
      ? []
      : [{ expected: "WWW-Authenticate: Bearer …", received: value ? `WWW-Authenticate: ${value}` : "none" }];
  },
});

// The only entry of the renderer page's bundle: the published AppBridge and
// its postMessage transport, re-exported unchanged.
export {
  AppBridge,
  PostMessageTransport,
} from "@modelcontextprotocol/ext-apps/app-bridge";

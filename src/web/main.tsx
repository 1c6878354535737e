import "./strict-csp.js";
import { createRoot } from "react-dom/client";
import { App } from "./app.js";

createRoot(document.getElementById("root")!).render(<App />);

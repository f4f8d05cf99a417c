"""The web front end: the Flask app factory (app.py), per-app state (state.py), request helpers (args.py,
lookup.py), how one data object is answered as a page or its JSON twin (render.py, shapes.py), and one
blueprint per area: pages, api, search_views, pictures (chart, spawn graph, trace), exports, hooks (the audit).

Blueprints never import the factory: what they share with it lives in state.py and endpoints.py.
"""

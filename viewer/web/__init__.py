"""The web front end: the app factory (app.py), per-app state (state.py), what a request asks for (asked.py),
one data object answered as a page or its JSON twin (render.py, shapes.py), and a blueprint per area. Blueprints
never import the factory: what they share with it lives in state.py and endpoints.py.
"""

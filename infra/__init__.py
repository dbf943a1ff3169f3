"""CloudFormation for everything Chalice does not create (lakelet.yaml), and the build step that merges it with
what the Chalice app implies (build.py: roles, log groups, environment, schedule, Function URL, state machines).

Not deployed to Lambda: Chalice packages only app.py and chalicelib/.
"""

import azure.functions as func

app = func.FunctionApp()


# Five fields, as Unix cron has them: the host's NCRONTAB wants six, seconds first.
@app.timer_trigger(arg_name="timer", schedule="*/5 * * * *")
def tick(timer: func.TimerRequest) -> None:
    pass
